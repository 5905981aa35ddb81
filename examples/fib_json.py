# A python3 workload for the README's USDT example: recursive calls, JSON encoding, and
# garbage collections it asks for (gc.collect() 15 times, automatic collection off).
import gc, json
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def encode(k):
    return json.dumps({"k": k, "fib": fib(k)})
gc.disable()
for k in range(15):
    encode(k)
    gc.collect()
