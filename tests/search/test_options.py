"""The schema of a SearchConfig field (``jaxgo.search.options``): written once, read by every check."""

import dataclasses

import pytest

from jaxgo.search.options import as_bool, coerce, field_option, option


@dataclasses.dataclass(frozen=True)
class Fields:
    count: int | None = option(None, "a count", flag=True, bounds=(1, 9))
    rate: float = 0.5  # a field without a schema: a float, no bounds
    size: float | None = option(None, "by board size", by_size=(1.0, 2.0))
    on: bool = option(True, "a switch", flag="--switch")


COUNT, RATE, SIZE, ON = (field_option(field) for field in dataclasses.fields(Fields))


def test_a_new_field_is_written_once():
    """The annotation gives the kind and None-ness, ``option`` the rest: no list elsewhere to extend."""
    assert (COUNT.kind, COUNT.nullable, COUNT.bounds, COUNT.flag, COUNT.help) == (int, True, (1, 9), "--count",
                                                                                  "a count")
    assert (RATE.kind, RATE.nullable, RATE.bounds, RATE.flag, RATE.default) == (float, False, None, None, 0.5)
    assert (SIZE.by_size, ON.kind, ON.flag) == ((1.0, 2.0), bool, "--switch")

    @dataclasses.dataclass(frozen=True)
    class Odd:
        items: list = ()

    with pytest.raises(TypeError, match="items"):
        field_option(dataclasses.fields(Odd)[0])


def test_values_are_coerced_to_the_annotated_kind():
    assert coerce(COUNT, 8.0) == 8 and type(coerce(COUNT, 8.0)) is int and coerce(COUNT, None) is None
    assert coerce(RATE, 1) == 1.0 and type(coerce(RATE, 1)) is float
    assert coerce(SIZE, "Auto") is None and coerce(ON, "off") is False and as_bool("on", 1) is True
    for spec, value, message in ((COUNT, 2.5, "count: expected an integer"), (RATE, None, "rate: expected a finite"),
                                 (RATE, float("nan"), "rate"), (RATE, True, "expected a number or string"),
                                 (ON, "maybe", "on: expected true or false")):
        with pytest.raises(ValueError, match=message):
            coerce(spec, value)
