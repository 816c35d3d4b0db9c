package escape

import "testing"

func TestControls(t *testing.T) {
	for _, tc := range []struct{ in, keep, want string }{
		{"plain text, ünïcode and a \\ backslash", "", "plain text, ünïcode and a \\ backslash"},
		{"red \x1b[31mtext\x1b[0m", "", `red \x1b[31mtext\x1b[0m`},
		{"a\nWarning: forged", "", `a\nWarning: forged`},
		{"two\nlines\tand a tab\r", "\n\t", "two\nlines\tand a tab\\r"},
		{"bell\a and delete\x7f", "", `bell\a and delete\x7f`},
		{"evil\u202etxt.exe", "", `evil\u202etxt.exe`},
		{"\u009b2J, a C1 control", "", `\u009b2J, a C1 control`},
		{"\x9b2J, a byte that is not UTF-8", "", `\x9b2J, a byte that is not UTF-8`},
		{"\ufffd as written", "", "\ufffd as written"},
	} {
		if got := Controls(tc.in, tc.keep); got != tc.want {
			t.Errorf("Controls(%q, %q) = %q, want %q", tc.in, tc.keep, got, tc.want)
		}
	}
}
