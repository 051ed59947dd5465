// Package docsection keeps several generators' output in one Markdown file:
// each writes its own section, between "<!-- begin NAME -->" and
// "<!-- end NAME -->", and leaves the rest of the file alone. make bench
// rewrites docs/performance.md but carries every such section over; make
// bench-scale replaces only its own.
package docsection
