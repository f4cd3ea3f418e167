"""The store's public API, exactly the names the specification defines."""

from workbook.validation import Conflict, identity, integer, payload
from workbook.records import connect, get
from workbook.writes import put
from workbook.deletion import forget, purge

__all__ = ["Conflict", "identity", "integer", "payload", "connect", "get",
           "put", "forget", "purge"]
