import pytest

from referee.config.pi_header import RESERVED, header, header_pin


def test_the_header_has_forty_pins_in_two_columns():
    pins = header()
    assert [p.number for p in pins] == list(range(1, 41))
    assert all(p.col == 2 - p.number % 2 and p.row == (p.number + 1) // 2 for p in pins)


def test_the_header_has_its_supply_and_ground_pins():
    names = [p.name for p in header()]
    assert [n for n, p in enumerate(names, 1) if p == "3V3"] == [1, 17]
    assert [n for n, p in enumerate(names, 1) if p == "5V"] == [2, 4]
    assert [n for n, p in enumerate(names, 1) if p == "GND"] == [6, 9, 14, 20, 25, 30, 34, 39]
    assert sorted(p.gpio for p in header() if p.gpio is not None) == list(range(28))


def test_every_gpiozero_spelling_names_the_same_pin():
    for pin in header():
        if pin.gpio is None:
            continue
        spellings = (f"GPIO{pin.gpio}", f"BCM{pin.gpio}", f"BOARD{pin.number}")
        assert {header_pin(s) for s in spellings} == {pin}
        assert header_pin(f"J8:{pin.number}") == pin


# No literal pin names here: test_wiring holds every file to the pin map.
@pytest.mark.parametrize("name", ["GND", "3V3", "J8:1", "GPIO100", "gpio5", "P1", ""])
def test_names_that_are_no_gpio_of_the_header_are_refused(name):
    with pytest.raises(ValueError):
        header_pin(name)


def test_the_reserved_pins_are_the_buses_and_the_screens():
    spi0 = {7, 8, 9, 10, 11}
    assert set(RESERVED) == {1, 2, 3, 14, 15, 24, 25} | spi0  # 0: the REPLAY button's
