package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestReadmeListsEveryCommand: every command a user can run has a row in the README's Commands
// table, which starts with its path.
func TestReadmeListsEveryCommand(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(data), "\n## Commands\n")
	table, _, _ = strings.Cut(table, "\n## ")
	root := NewRootCommand(Streams{})
	root.InitDefaultCompletionCmd()
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// completion's subcommands are the shells, which its row lists.
		if c.HasAvailableSubCommands() && c.Name() != "completion" {
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					walk(sub)
				}
			}
			return
		}
		checked++
		if !strings.Contains(table, "| `"+c.CommandPath()+" ") && !strings.Contains(table, "| `"+c.CommandPath()+"`") {
			t.Errorf("the README's Commands table has no row for %s", c.CommandPath())
		}
	}
	walk(root)
	if checked < 15 {
		t.Errorf("checked %d commands: the walk is broken", checked)
	}
}
