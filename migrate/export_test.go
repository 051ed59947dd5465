package migrate

// ServerForExamples is the examples' redis-server (test builds only).
func ServerForExamples() string { return exampleAddr }
