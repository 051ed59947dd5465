package docsection

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReplace(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"added to an empty file", "", "\n\n<!-- begin s -->\nnew\n<!-- end s -->\n"},
		{"added at the end", "# T\n\ntext\n", "# T\n\ntext\n\n<!-- begin s -->\nnew\n<!-- end s -->\n"},
		{"replaced in place", "a\n<!-- begin s -->\nold\n<!-- end s -->\nb\n",
			"a\n<!-- begin s -->\nnew\n<!-- end s -->\nb\n"},
		{"others left alone", "<!-- begin t -->\nx\n<!-- end t -->\n<!-- begin s -->\nold\n<!-- end s -->\n",
			"<!-- begin t -->\nx\n<!-- end t -->\n<!-- begin s -->\nnew\n<!-- end s -->\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Replace(tc.doc, "s", "new\n"))
		})
	}
}

func TestCarry(t *testing.T) {
	from := "old report\n<!-- begin scale -->\nS\n<!-- end scale -->\n<!-- begin fleet -->\nF\n<!-- end fleet -->\n"
	got, err := Carry(from, "# new report\n")
	require.NoError(t, err)
	require.Equal(t, "# new report\n\n<!-- begin scale -->\nS\n<!-- end scale -->\n\n<!-- begin fleet -->\nF\n<!-- end "+
		"fleet -->\n", got)

	_, err = Carry("<!-- begin broken -->\nno end\n", "x")
	require.ErrorContains(t, err, `"broken" begins but does not end`)
}
