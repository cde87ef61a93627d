from a import old_name

print(old_name())
