package main

import "testing"

func TestKeepJavaSection(t *testing.T) {
	java := javaBegin + "\n## Java\nfigures\n" + javaEnd
	tests := []struct {
		name, md, prev, want string
	}{
		{"no previous report", "# Go\n", "", "# Go\n"},
		{"previous report without a Java section", "# Go\n", "# Go (old)\n", "# Go\n"},
		{"the Java section kept", "# Go\n", "# Go (old)\n\n" + java + "\n", "# Go\n\n" + java + "\n"},
		{"markers out of order", "# Go\n", javaEnd + javaBegin, "# Go\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keepJavaSection(tt.md, tt.prev); got != tt.want {
				t.Errorf("keepJavaSection() = %q, want %q", got, tt.want)
			}
		})
	}
}
