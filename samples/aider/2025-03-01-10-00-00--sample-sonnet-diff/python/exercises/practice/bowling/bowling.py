class BowlingGame:
    def __init__(self):
        self.rolls = []
