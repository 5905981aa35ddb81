#include <cstdio>
int main() { std::puts("uprof " UPROF_VERSION); return 0; }
