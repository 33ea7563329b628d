"""Warnings and errors raised by ldpnum."""

__all__ = ["ClippingWarning", "BudgetWarning", "SpecMismatchError"]


class ClippingWarning(UserWarning):
    """Finite values outside the public bounds were clipped to the nearest bound.

    Attributes
    ----------
    count : int
        How many values were clipped.
    first_index : int
        Position of the first clipped value in the input.
    """

    def __init__(self, message, *, count=0, first_index=-1):
        super().__init__(message)
        self.count = int(count)
        self.first_index = int(first_index)


class BudgetWarning(UserWarning):
    """Each row (person) spends the sum of several columns' ε because no strategy was chosen: the default
    ``"all-columns"`` composes sequentially. Pass ``strategy=`` explicitly to silence it."""


class SpecMismatchError(ValueError):
    """Reports or aggregates were produced under a different mechanism specification."""
