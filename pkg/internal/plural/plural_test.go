package plural

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		n    int
		one  string
		many []string
		want string
	}{
		{0, "host", nil, "0 hosts"},
		{1, "host", nil, "1 host"},
		{2, "host", nil, "2 hosts"},
		{1, "entry", []string{"entries"}, "1 entry"},
		{5, "entry", []string{"entries"}, "5 entries"},
		{-1, "second", nil, "-1 second"},
	}
	for _, tt := range tests {
		if got := Count(tt.n, tt.one, tt.many...); got != tt.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tt.n, tt.one, tt.many, got, tt.want)
		}
	}
}
