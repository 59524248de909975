print("about to fail")


def divide(a, b):
    return a / b


divide(1, 0)
