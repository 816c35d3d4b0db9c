package assets

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"sort"
	"strings"
)

// Files returns a handler that serves each directory under its URL prefix, for example
// "/release/v1.36.3/" from the release tree and "/core:/stable:/v1.34/deb/" from an apt
// repository. The root lists the prefixes, which helps a person looking at the sandbox.
func Files(routes map[string]string) (http.Handler, error) {
	mux := http.NewServeMux()
	prefixes := make([]string, 0, len(routes))
	for prefix, dir := range routes {
		if !strings.HasPrefix(prefix, "/") || !strings.HasSuffix(prefix, "/") {
			return nil, fmt.Errorf("file route %q: the prefix must start and end with /", prefix)
		}
		prefixes = append(prefixes, prefix)
		mux.Handle(prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), http.FileServer(http.Dir(dir))))
	}
	sort.Strings(prefixes)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, p := range prefixes {
			fmt.Fprintln(w, p)
		}
	})
	return mux, nil
}

// Logged writes one line per request (method, path, status) to l, so that a test can see which
// host fetched what, for example that images came through the registry mirror.
func Logged(l *log.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		l.Printf("%s %s %s %d", r.RemoteAddr, r.Method, r.URL.RequestURI(), sw.status)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
