class Zipper:
    @staticmethod
    def from_tree(tree):
        pass

    def value(self):
        pass

    def set_value(self):
        pass

    def left(self):
        pass

    def set_left(self):
        pass

    def right(self):
        pass

    def set_right(self):
        pass

    def up(self):
        pass

    def to_tree(self):
        pass
