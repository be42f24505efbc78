"""openapi_check.py: docs/openapi.yaml as a checker of real responses.

Loads the OpenAPI 3.0 document, turns its schemas into JSON Schema (draft 4,
`nullable: true` as a "null" type) with every $ref resolved against the whole
document, and checks one response at a time: its status is one the operation
documents, its Content-Type one that status documents, and its JSON body is
valid against that status's schema. Used by check_responses.py; needs
Debian's python3-yaml and python3-jsonschema (run with /usr/bin/python3).
"""
import copy
import gzip
import json
import subprocess

import jsonschema
import yaml


def _nullable_to_type(node):
    """OpenAPI 3.0's `nullable: true` is JSON Schema's extra "null" type."""
    if isinstance(node, dict):
        if node.get("nullable") is True and isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
        for v in node.values():
            _nullable_to_type(v)
    elif isinstance(node, list):
        for v in node:
            _nullable_to_type(v)


def decode(body, encoding):
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "zstd":
        p = subprocess.run(["zstd", "-dc"], input=body, stdout=subprocess.PIPE, check=False)
        if p.returncode:
            raise ValueError("zstd -dc failed")
        return p.stdout
    raise ValueError(f"unknown Content-Encoding {encoding}")


class Spec:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        self.schema_doc = copy.deepcopy(self.doc)
        _nullable_to_type(self.schema_doc)
        self.resolver = jsonschema.RefResolver.from_schema(self.schema_doc)

    def deref(self, node):
        while isinstance(node, dict) and "$ref" in node:
            _, node = self.resolver.resolve(node["$ref"])
        return node

    def operations(self):
        """Every (METHOD, path template) the document describes."""
        for path, ops in self.doc["paths"].items():
            for method in ops:
                if method in ("get", "head", "put", "post", "delete", "patch", "options"):
                    yield method.upper(), path

    def statuses(self, method, template):
        op = self.doc["paths"][template][method.lower()]
        return sorted(str(s) for s in op["responses"])

    def response(self, method, template, status):
        op = self.schema_doc["paths"][template][method.lower()]
        r = op["responses"].get(status) or op["responses"].get(int(status))
        return self.deref(r) if r is not None else None

    def documented_method(self, method, template):
        """The operation whose responses describe METHOD on TEMPLATE: its own, or, for a
        method the route does not have, the first operation's (where the 405 that such
        a method gets is described)."""
        item = self.doc["paths"].get(template)
        if item is None:
            return None
        if method.lower() in item:
            return method
        return next((m.upper() for m in item if m in ("get", "head", "put", "post", "delete")), None)

    def check(self, method, template, status, ctype, body, encoding=None):
        """Problems (a list of strings; empty when the response is as documented). A body
        with a Content-Encoding is checked once decoded (gzip, zstd)."""
        status = str(status)
        doc_method = self.documented_method(method, template)
        if doc_method is None:
            return [f"{template} is not in openapi.yaml"]
        if doc_method != method and status != "405":
            return [f"{method} {template} is not in openapi.yaml and the answer is not 405"]
        method = doc_method
        r = self.response(method, template, status)
        if r is None:
            return [f"status {status} is not documented for {method} {template} "
                    f"(documented: {', '.join(self.statuses(method, template))})"]
        content = r.get("content") or {}
        if method == "HEAD" or status in ("204", "304") or not content:
            if body:
                return [f"{len(body)} body bytes where none is documented"]
            return []
        mtype = (ctype or "").split(";")[0].strip()
        if mtype not in content:
            return [f"Content-Type {ctype!r} is not documented for {status} "
                    f"(documented: {', '.join(content)})"]
        schema = self.deref(content[mtype].get("schema") or {})
        if mtype != "application/json" or not schema or schema.get("type") == "string":
            return []  # bytes, or a part of a JSON text (206)
        if encoding:
            try:
                body = decode(body, encoding)
            except (OSError, ValueError) as e:
                return [f"the body does not decode as {encoding}: {e}"]
        try:
            value = json.loads(body)
        except ValueError as e:
            return [f"the body is not JSON: {e}"]
        v = jsonschema.Draft4Validator(schema, resolver=self.resolver)
        return [f"{'/'.join(str(p) for p in e.absolute_path) or '(body)'}: {e.message}"
                for e in sorted(v.iter_errors(value), key=lambda e: list(e.absolute_path))][:5]

    def error_codes(self):
        err = self.deref({"$ref": "#/components/schemas/Error"})
        return set(err["properties"]["error"]["properties"]["code"]["enum"])
