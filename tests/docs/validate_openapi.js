// validate_openapi.js: checks docs/openapi.yaml with a real OpenAPI validator
// (@apidevtools/swagger-parser: js-yaml parsing, the OpenAPI 3.0/3.1 JSON
// schemas, $ref resolution). Usage: node validate_openapi.js FILE
// Prints "valid: OpenAPI <version>, <n> paths" and exits 0, or the error and exits 1.
"use strict";
let SwaggerParser;
try {
  SwaggerParser = require("@apidevtools/swagger-parser");
} catch (e) {
  console.error("@apidevtools/swagger-parser is not installed in tests/docs/node_modules: run .ci/deps");
  process.exit(1);
}

async function main() {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: node validate_openapi.js FILE");
    process.exit(2);
  }
  try {
    const api = await SwaggerParser.validate(file);
    const n = Object.keys(api.paths || {}).length;
    console.log(`valid: OpenAPI ${api.openapi}, ${n} paths: ${file}`);
  } catch (e) {
    console.error(`invalid: ${file}\n${e.message}`);
    process.exit(1);
  }
}
main();
