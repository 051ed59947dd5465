package luafrag

import (
	"embed"
	"fmt"
	"strings"

	"github.com/lockbridge/lockbridge/driver"
)

//go:embed *.lua
var files embed.FS

// Script returns the script called name whose source is the named fragments
// (file names in this package, in order) followed by body. It panics on an
// unknown fragment: fragment names are constants, so that is a programming
// error caught by any test that builds the script.
func Script(name, body string, fragments ...string) *driver.Script {
	var b strings.Builder
	for _, f := range fragments {
		src, err := files.ReadFile(f)
		if err != nil {
			panic(fmt.Sprintf("luafrag: no fragment %q: %v", f, err))
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	b.WriteString(body)
	return driver.NewScript(name, b.String())
}
