for n in range(3):
    print("line", n + 1)
