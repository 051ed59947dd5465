package driver

// ClassOf returns the class of err's Redis error reply, or nil.
var ClassOf = classOf
