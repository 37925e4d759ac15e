"""Reading the JUnit XML a pytester run wrote (``--junitxml``), for the tests of the plugin's
JUnit properties."""
import xml.etree.ElementTree as ET


def junit_properties(path):
    """``{test case name: [(property name, value), ...]}`` in the file's order."""
    root = ET.parse(str(path)).getroot()
    return {case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")]
            for case in root.iter("testcase")}


def names(pairs):
    """The property names of ``junit_properties``' pairs."""
    return [n for n, _ in pairs]
