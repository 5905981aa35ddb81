#!/bin/sh
# Lists C++ functions whose bodies run over a number of lines (80 by default), longest
# first: "src/analyse/pairing.cpp:41 Pairer::on_sample 94". A rough scan, not a parser:
# a function starts at a line that opens a brace at nesting depth 0 or inside a
# namespace, with a '(' on it or on the lines just before (the signature), and is not a
# class, struct, enum, namespace or initialiser; its length runs from the signature's
# first line to the line of its closing brace. Braces in strings, characters and
# comments are skipped. Lambdas count toward the function they are in.
#
#   scripts/long_functions.sh                      # src/, over 80 lines
#   scripts/long_functions.sh 60 src/analyse src/present/report_text.cpp
#
# A function over the limit carries its reason in the comment just above it, on a line
# that says "long" ("// Long: a flat switch over the record types"); the scan lists it
# anyway, with that line after "reason:", so the list shows every long function and why.
set -eu
limit=${1:-80}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- src
find "$@" -name '*.cpp' -o -name '*.h' -o -name '*.cc' | sort | while read -r f; do
  awk -v limit="$limit" -v file="$f" '
    # Strips string and character literals and comments from one line; keeps the
    # state of a block comment across lines in `in_comment`.
    function code_of(line,    out, i, c, n, q) {
      out = ""; n = length(line); i = 1
      while (i <= n) {
        c = substr(line, i, 1)
        if (in_comment) {
          if (substr(line, i, 2) == "*/") { in_comment = 0; i += 2 } else i++
          continue
        }
        if (substr(line, i, 2) == "//") break
        if (substr(line, i, 2) == "/*") { in_comment = 1; i += 2; continue }
        if (c == "\"" || c == "\x27") {
          # R"(...)" raw strings on one line: skip to the closing )"
          if (c == "\"" && substr(line, i - 1, 1) == "R") {
            q = index(substr(line, i), ")\"")
            if (q > 0) { i += q + 1; continue }
          }
          q = c; i++
          while (i <= n && substr(line, i, 1) != q) { if (substr(line, i, 1) == "\\") i++; i++ }
          i++; out = out " "; continue
        }
        out = out c; i++
      }
      return out
    }
    # The name just before the parameter list of the signature in `sig`.
    function name_of(sig,    s, p) {
      s = sig; gsub(/[ \t]+/, " ", s)
      p = index(s, "(")
      if (p == 0) return "?"
      s = substr(s, 1, p - 1); sub(/ +$/, "", s)
      n = split(s, parts, " ")
      return parts[n]
    }
    BEGIN { depth = 0; in_comment = 0; start = 0; reason = "" }
    {
      raw = $0
      code = code_of(raw)
      # Remember the comment just above the signature: a reason to stay long.
      if (depth == base_depth && start == 0) {
        if (raw ~ /^[ \t]*\/\//) {
          if (!in_reason) reason = ""
          if (raw ~ /[Ll]ong( |:|,|\.|$)/) reason = raw
          in_reason = 1
          sig_lines = ""; sig_start = 0
          next
        }
      }
      if (depth == base_depth && start == 0) {
        if (code ~ /^[ \t]*$/) { if (!in_reason) reason = ""; next }
        if (sig_start == 0) sig_start = NR
        sig_lines = sig_lines " " code
      }
      opens = gsub(/\{/, "{", code); closes = gsub(/\}/, "}", code)
      if (depth == base_depth && start == 0 && opens > closes) {
        if (sig_lines ~ /^[ \t]*(namespace|extern "C")/ || sig_lines ~ /namespace[ \t]+[A-Za-z_:]*[ \t]*\{/) {
          base_depth = depth + opens - closes; sig_lines = ""; sig_start = 0; reason = ""; in_reason = 0
          depth += opens - closes; next
        }
        if (sig_lines ~ /\(/ && sig_lines !~ /(^|[ \t])(class|struct|enum|union)[ \t]/ && sig_lines !~ /=[ \t]*\{/) {
          start = sig_start; name = name_of(sig_lines); open_depth = depth
        }
      }
      depth += opens - closes
      if (start && depth == open_depth) {
        len = NR - start + 1
        if (len > limit) {
          r = reason; sub(/^[ \t]*\/\/[ \t]*/, "", r)
          printf "%d\t%s:%d %s %d%s\n", len, file, start, name, len, (r != "" ? "  reason: " r : "")
        }
        start = 0
      }
      if (depth == base_depth && start == 0 && code ~ /[;}][ \t]*$/) { sig_lines = ""; sig_start = 0; reason = ""; in_reason = 0 }
      if (depth < base_depth) base_depth = depth
      if (code !~ /^[ \t]*$/) in_reason = 0
    }
  ' "$f"
done | sort -rn | cut -f2-
