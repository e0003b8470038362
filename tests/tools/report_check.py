#!/usr/bin/env python3
"""report_check.py - validate subcirc's --json reports against the schema
in the tree (tools/report.schema.json): SCHEMA FILE...

The validator is here, small, for the part of JSON Schema (draft 2020-12)
that the schema uses: type, const, enum, properties, required,
additionalProperties, items, minItems, maxItems, minimum, maximum,
pattern, $ref (to #/$defs/...) and oneOf. A keyword outside that part is
an error, so the schema cannot grow a rule that nothing checks. Where the
jsonschema package is installed, the schema is also checked as a draft
2020-12 schema and every file validated by it too; the test needs only
python3 (tools/deps).

Prints a line per file; exits 1 with the first error of each file that
does not validate.
"""
import json
import re
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class Invalid(Exception):
    pass


def resolve(root, ref):
    if not ref.startswith("#/"):
        raise Invalid("unsupported $ref " + ref)
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def check(root, schema, v, path):
    for k in schema:
        if k not in ANNOTATIONS and k not in KEYWORDS:
            raise Invalid("%s: schema keyword '%s' is not supported" % (path, k))
    for k, rule in schema.items():
        if k in KEYWORDS:
            KEYWORDS[k](root, schema, rule, v, path)


def k_type(root, schema, rule, v, path):
    names = rule if isinstance(rule, list) else [rule]
    if not any(TYPES[n](v) for n in names):
        raise Invalid("%s: %r is not of type %s" % (path, v, "/".join(names)))


def k_const(root, schema, rule, v, path):
    if v != rule or type(v) is not type(rule):
        raise Invalid("%s: %r is not %r" % (path, v, rule))


def k_enum(root, schema, rule, v, path):
    if not any(v == e and type(v) is type(e) for e in rule):
        raise Invalid("%s: %r is not one of %r" % (path, v, rule))


def k_properties(root, schema, rule, v, path):
    if isinstance(v, dict):
        for name, sub in rule.items():
            if name in v:
                check(root, sub, v[name], path + "." + name)


def k_required(root, schema, rule, v, path):
    if isinstance(v, dict):
        for name in rule:
            if name not in v:
                raise Invalid("%s: '%s' is missing" % (path, name))


def k_additional(root, schema, rule, v, path):
    if not isinstance(v, dict):
        return
    known = schema.get("properties", {})
    for name in v:
        if name in known:
            continue
        if rule is False:
            raise Invalid("%s: '%s' is not in the schema" % (path, name))
        if isinstance(rule, dict):
            check(root, rule, v[name], path + "." + name)


def k_items(root, schema, rule, v, path):
    if isinstance(v, list):
        for i, x in enumerate(v):
            check(root, rule, x, "%s[%d]" % (path, i))


def k_min_items(root, schema, rule, v, path):
    if isinstance(v, list) and len(v) < rule:
        raise Invalid("%s: fewer than %d items" % (path, rule))


def k_max_items(root, schema, rule, v, path):
    if isinstance(v, list) and len(v) > rule:
        raise Invalid("%s: more than %d items" % (path, rule))


def k_minimum(root, schema, rule, v, path):
    if TYPES["number"](v) and v < rule:
        raise Invalid("%s: %r is below %r" % (path, v, rule))


def k_maximum(root, schema, rule, v, path):
    if TYPES["number"](v) and v > rule:
        raise Invalid("%s: %r is above %r" % (path, v, rule))


def k_pattern(root, schema, rule, v, path):
    if isinstance(v, str) and not re.search(rule, v):
        raise Invalid("%s: %r does not match %s" % (path, v, rule))


def k_ref(root, schema, rule, v, path):
    check(root, resolve(root, rule), v, path)


def k_one_of(root, schema, rule, v, path):
    errors, passed = [], 0
    for sub in rule:
        try:
            check(root, sub, v, path)
            passed += 1
        except Invalid as e:
            errors.append(str(e))
    if passed != 1:
        raise Invalid("%s: %d of oneOf's %d match (%s)"
                      % (path, passed, len(rule), "; ".join(errors)))


KEYWORDS = {
    "type": k_type, "const": k_const, "enum": k_enum,
    "properties": k_properties, "required": k_required,
    "additionalProperties": k_additional, "items": k_items,
    "minItems": k_min_items, "maxItems": k_max_items,
    "minimum": k_minimum, "maximum": k_maximum, "pattern": k_pattern,
    "$ref": k_ref, "oneOf": k_one_of,
}


def library(schema):
    """The jsonschema package's validator, where it is installed."""
    try:
        import jsonschema
    except ImportError:
        return None
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def main():
    schema = json.load(open(sys.argv[1]))
    other = library(schema)
    bad = 0
    for f in sys.argv[2:]:
        d = json.load(open(f))
        try:
            check(schema, schema, d, "$")
            if other:
                other.validate(d)
            print("ok: %s (%s %s)" % (f, d["command"], d["workload"]))
        except Invalid as e:
            print("INVALID: %s: %s" % (f, e))
            bad += 1
        except Exception as e:  # jsonschema's ValidationError
            print("INVALID (jsonschema): %s: %s" % (f, str(e).splitlines()[0]))
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
