from calc import mul

assert mul(3, 4) == 12, mul(3, 4)
print("ok")
