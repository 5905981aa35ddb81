#include "uprof/util/gzip.h"

#include <zlib.h>

namespace uprof {

Result<std::string> gzip(std::string_view data) {
  if (data.size() > (1u << 30)) return err("gzip: ", data.size(), " bytes is more than one buffer takes (1 GiB)");
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return err("gzip: zlib: ", z.msg ? z.msg : "deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return err("gzip: zlib: deflate did not finish (", rc, ")");
  out.resize(written);
  return out;
}

}  // namespace uprof
