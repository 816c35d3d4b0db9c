package etcd

import (
	"context"
	"fmt"
	"time"
)

// DefragmentTimeout bounds one member's defragmentation. etcd rewrites its whole database file
// meanwhile and answers nothing else; a database at etcd's default 2 GiB quota takes tens of
// seconds on a slow disk.
const DefragmentTimeout = 5 * time.Minute

// Defragment defragments the member at endpoint (its client URL) and returns its database size
// before and after, as the member's status reports it. The member must answer a status call
// first: a member that does not answer is left alone.
func (c *Client) Defragment(ctx context.Context, endpoint string) (before, after int64, err error) {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	st, err := c.c.Status(sctx, endpoint)
	cancel()
	if err != nil {
		return 0, 0, fmt.Errorf("etcd member %s does not answer: %w", endpoint, err)
	}
	before = st.DbSize
	dctx, cancel := context.WithTimeout(ctx, DefragmentTimeout)
	defer cancel()
	if _, err := c.c.Defragment(dctx, endpoint); err != nil {
		return before, 0, fmt.Errorf("defragmenting etcd member %s: %w", endpoint, err)
	}
	sctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err = c.c.Status(sctx, endpoint)
	if err != nil {
		return before, 0, fmt.Errorf("etcd member %s does not answer after its defragmentation: %w", endpoint, err)
	}
	return before, st.DbSize, nil
}
