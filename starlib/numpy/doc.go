// Package numpy is the Starlark modules numpy and numpy.random: the small
// part of numpy scripts use to build toy data and check results, and
// numpy's legacy RandomState bit for bit. Module and RandomModule list
// their builtins; the values are starlib's (Array, RandomState).
package numpy
