#!/usr/bin/python3
"""topology/topology.schema.json describes what `ultrasim topology SPEC --format json` writes.

Usage: topology_schema_test.py ULTRASIM. Needs python3-jsonschema (Debian; scripts/setup.sh installs it)."""

import json
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ULTRASIM = sys.argv.pop(1) if len(sys.argv) > 1 else "ultrasim"

import jsonschema


class SchemaTest(unittest.TestCase):
    def test_every_generator_export_validates(self):
        schema = json.loads((ROOT / "topology" / "topology.schema.json").read_text())
        listed = json.loads(subprocess.run([ULTRASIM, "list", "topologies", "--format", "json"],
                                           check=True, capture_output=True, text=True).stdout)
        specs = ["switch:1"] + [t["example"] for t in listed["topologies"] if t["name"] != "file"]
        for spec in specs:
            out = subprocess.run([ULTRASIM, "topology", spec, "--format", "json"], check=True,
                                 capture_output=True, text=True)
            with self.subTest(spec=spec):
                jsonschema.validate(json.loads(out.stdout), schema)


if __name__ == "__main__":
    unittest.main()
