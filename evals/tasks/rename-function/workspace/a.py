def old_name():
    return 42
