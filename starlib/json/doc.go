// Package json is the Starlark module json: go.starlark.net's, with
// encoding restricted to plain data and arrays (Module lists its
// builtins).
package json
