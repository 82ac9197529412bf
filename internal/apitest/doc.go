// Package apitest holds tests of refine's public surface as a module
// outside the repository sees it. It has no code of its own.
package apitest
