"""The hypothesis profile (conftest.py) holds for every property: no test's own settings
undo it."""

import re

from .conftest import ROOT

# A list of health checks written out: hypothesis takes it in place of the profile's.
OWN_LIST = re.compile(r"suppress_health_check\s*=\s*[\[(]")


def test_no_property_brings_back_the_checks_the_profile_suppresses():
    """Nine tests that suppressed their fixture's health check with a list of their own
    had the too-slow check back, which fails right examples on a loaded machine: a test
    adds to the profile's list (conftest.also_suppressed), never replaces it."""
    own = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, found.start()) + 1}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != "conftest.py"
        for text in [path.read_text()]
        for found in OWN_LIST.finditer(text)
    ]
    assert own == []
