#!/usr/bin/python3
"""Validates a JSON document (stdin) against a JSON Schema file: validate_json.py SCHEMA.
Prints 'valid' or the first error; exit status 0 only when valid."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
doc = json.load(sys.stdin)
try:
    jsonschema.validate(doc, schema)
except jsonschema.ValidationError as e:
    print("invalid: %s at %s" % (e.message, "/".join(str(p) for p in e.absolute_path)))
    sys.exit(1)
print("valid")
