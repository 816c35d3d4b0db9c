package cli

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

func TestPrintRows(t *testing.T) {
	type item struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}
	items := []item{{"cp-1", 1}, {"cp-22", 22}}
	row := func(w io.Writer, it item) { fmt.Fprintf(w, "%s\t%d\n", it.Name, it.N) }
	var text bytes.Buffer
	if err := printRows(&text, "text", items, "NAME\tN", row); err != nil {
		t.Fatal(err)
	}
	if want := "NAME   N\ncp-1   1\ncp-22  22\n"; text.String() != want {
		t.Errorf("text:\n%q\nwant\n%q", text.String(), want)
	}
	var js bytes.Buffer
	if err := printRows(&js, "json", items, "NAME\tN", row); err != nil {
		t.Fatal(err)
	}
	if want := "[\n  {\n    \"name\": \"cp-1\",\n    \"n\": 1\n  },\n  {\n    \"name\": \"cp-22\",\n    \"n\": 22\n  }\n]\n"; js.String() != want {
		t.Errorf("json:\n%s\nwant\n%s", js.String(), want)
	}
}
