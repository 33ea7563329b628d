# Type stub of the Cython extension server_sketch.pyx: its functions are typed by their memoryview signatures there;
# to type checkers they are Any until the kernels get full stubs.
from typing import Any

def __getattr__(name: str) -> Any: ...
