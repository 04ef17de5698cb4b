"""Arrow columns as numpy arrays without pyarrow's pandas shim (``Array.to_numpy`` imports
pandas, a third of a second of an interactive command's start-up; issue 50)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
import pyarrow as pa


def numpy_of(column: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.generic]:
    """``column`` as numpy: null-free integer and floating columns straight from their data
    buffer (a copy only when the column has several chunks), null-free booleans unpacked from
    their bits; any other column through ``to_numpy``."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    t = arr.type
    if arr.null_count == 0 and pa.types.is_boolean(t):  # bit-packed, least significant bit first
        if len(arr) == 0:
            return np.empty(0, dtype=bool)
        bits = np.unpackbits(np.frombuffer(arr.buffers()[1], dtype=np.uint8), bitorder="little")
        return bits[arr.offset : arr.offset + len(arr)].astype(bool)
    if arr.null_count == 0 and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        kind = "f" if pa.types.is_floating(t) else ("i" if pa.types.is_signed_integer(t) else "u")
        dtype = np.dtype(f"{kind}{t.bit_width // 8}")
        if len(arr) == 0:
            return np.empty(0, dtype=dtype)
        buf = arr.buffers()[1]
        return np.frombuffer(buf, dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)
    return np.asarray(arr.to_numpy(zero_copy_only=False))


def string_array(values: Iterable[str]) -> pa.StringArray:
    """``pa.array(values, pa.string())`` built from its buffers (``pa.array`` imports pandas
    to ask whether its input is a pandas object); for domains and labels, not records."""
    encoded = [str(v).encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets.tobytes()), data)


def array_of(values: npt.NDArray[np.generic]) -> pa.Array:
    """A numpy integer or floating array as Arrow, zero-copy (``pa.array`` imports pandas to ask
    whether its input is a pandas object); any other dtype through ``pa.array``."""
    v = np.ascontiguousarray(values)
    if v.dtype.kind in "iuf" and v.dtype.byteorder in "=|" and v.ndim == 1:
        kind = {"i": "int", "u": "uint", "f": "float"}[v.dtype.kind]
        t = (
            pa.float16()
            if v.dtype.itemsize == 2 and kind == "float"
            else pa.type_for_alias(f"{kind}{8 * v.dtype.itemsize}")
        )
        return pa.Array.from_buffers(t, len(v), [None, pa.py_buffer(v)])
    return pa.array(v)
