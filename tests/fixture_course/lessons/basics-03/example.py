# The fixture's lesson in cells (builder/cells.py): one of each kind of cell.
# %% setup hide
squares = [n * n for n in range(4)]

# %% show-squares
print("squares", squares)
sum(squares)

# %% too-big raises=IndexError
squares[10]

# %% aside show
print("shown, never run")
