package scripts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed templates/*.sh
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"q":        Quote,
	"qs":       quoteAll,
	"file":     heredocFile,
	"filewith": heredocFileWith,
}).ParseFS(templateFS, "templates/*.sh"))

// render builds a whole script: a header naming the task and family, the shared helpers of
// lib.sh, and the task's template as the body of main, which runs with stdin from /dev/null.
func render(task, title string, family Family, data any) (string, error) {
	var body bytes.Buffer
	if err := templates.ExecuteTemplate(&body, task+".sh", data); err != nil {
		return "", fmt.Errorf("rendering the %s script for %s hosts: %w", task, family, err)
	}
	lib, err := templateFS.ReadFile("templates/lib.sh")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	hosts := string(family) + " hosts"
	if family == anyFamily {
		hosts = "hosts of every family"
	}
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# slipway %s: %s\n# Rendered for %s. Running it again changes nothing that is already right.\n", task, title, hosts)
	b.Write(lib)
	b.WriteString("\nmain() {\n")
	b.WriteString(strings.TrimRight(body.String(), "\n"))
	b.WriteString("\n}\n\nmain </dev/null\n")
	return b.String(), nil
}

// anyFamily renders scripts that are the same on every family.
const anyFamily Family = "any"

// heredocDelimiter ends the heredocs of rendered files; no rendered line may equal it.
const heredocDelimiter = "SLIPWAY_EOF"

// heredocFile renders a put_file call that installs content at path with mode, setting the
// variable flag (may be empty) when the file changed.
func heredocFile(path, mode, content, flag string) (string, error) {
	call, doc, err := putFile(path, mode, content, flag)
	if err != nil {
		return "", err
	}
	return call + " " + doc, nil
}

// heredocFileWith is heredocFile for a file whose content ends with that of the host's file
// from, when from is set: what the script must not carry (credentials, see NodeCredentials).
// It fails, naming from, when that file is missing, before it writes anything.
func heredocFileWith(path, mode, content, from, flag string) (string, error) {
	if from == "" {
		return heredocFile(path, mode, content, flag)
	}
	qf, err := Quote(from)
	if err != nil {
		return "", err
	}
	missing, err := Quote(from + " is missing: it holds what " + path + " needs and this script does not carry")
	if err != nil {
		return "", err
	}
	call, doc, err := putFile(path, mode, content, flag)
	if err != nil {
		return "", err
	}
	check := "[ -r " + qf + " ] || fail " + missing + "\n"
	if content == "" {
		return check + call + " <" + qf, nil
	}
	// Not a pipeline: put_file must run in this shell to set flag.
	return check + call + " < <(\ncat " + doc + "\ncat " + qf + "\n)", nil
}

// putFile returns the put_file call for path and the heredoc of content it reads.
func putFile(path, mode, content, flag string) (call, doc string, err error) {
	qp, err := Quote(path)
	if err != nil {
		return "", "", err
	}
	if strings.ContainsRune(content, 0) {
		return "", "", fmt.Errorf("content of %s contains a NUL byte", path)
	}
	for _, line := range strings.Split(content, "\n") {
		if line == heredocDelimiter {
			return "", "", fmt.Errorf("content of %s contains the line %s", path, heredocDelimiter)
		}
	}
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	call = "put_file " + qp + " " + mode
	if flag != "" {
		call += " " + flag
	}
	return call, "<<'" + heredocDelimiter + "'\n" + content + heredocDelimiter, nil
}
