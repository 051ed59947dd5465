// Package luafrag holds Lua functions that scripts of several lock packages
// share (strict decoding of legacy values, the owner-window test, release
// notifications, …), one fragment per .lua file. Script prepends fragments to
// a script body, so a function is written once however many scripts call it.
package luafrag
