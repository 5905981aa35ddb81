#!/usr/bin/python3
"""Validates a JSON document (stdin) against a JSON Schema file: validate_json.py SCHEMA.
Prints 'valid' or the first error; exit status 0 only when valid.
A schema may refer to the other schemas beside it by file name
("report.schema.json#/properties/recording"): docs/diff.schema.json does."""
import json
import os
import sys

import jsonschema

path = sys.argv[1]
schema = json.load(open(path))
folder = os.path.dirname(os.path.abspath(path))
schemas = {name: json.load(open(os.path.join(folder, name)))
           for name in sorted(os.listdir(folder)) if name.endswith(".schema.json")}
cls = jsonschema.validators.validator_for(schema)
try:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
    registry = Registry().with_resources(
        (name, Resource.from_contents(s, default_specification=DRAFT202012)) for name, s in schemas.items())
    validator = cls(schema, registry=registry)
except ImportError:  # jsonschema before 4.18 (Debian 12's 4.10): references go through a RefResolver,
    # which needs absolute addresses to move between files
    base = "file://" + folder + "/"
    store = {base + name: s for name, s in schemas.items()}
    resolver = jsonschema.RefResolver(base_uri=base + os.path.basename(path), referrer=schema, store=store)
    validator = cls(schema, resolver=resolver)
doc = json.load(sys.stdin)
error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
if error is not None:
    print("invalid: %s at %s" % (error.message, "/".join(str(p) for p in error.absolute_path)))
    sys.exit(1)
print("valid")
