//go:build race

package main

// raceBuild: the tests build the CLI with the race detector when they run
// with it.
const raceBuild = true
