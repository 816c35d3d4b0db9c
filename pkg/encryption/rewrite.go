package encryption

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// rewritePage is how many Secrets one list call returns, so that a cluster with many large
// Secrets is not read into memory at once.
const rewritePage = 200

// RewriteSecrets updates every Secret of every namespace without changing it, which makes the
// API server store it again with the provider that now encrypts. A Secret changed meanwhile is
// read again and updated (a conflict is retried); one deleted meanwhile is skipped. progress,
// if not nil, hears the count after every page. It returns how many Secrets were rewritten.
func RewriteSecrets(ctx context.Context, kc kubernetes.Interface, progress func(done int)) (int, error) {
	secrets := kc.CoreV1().Secrets(metav1.NamespaceAll)
	n := 0
	opts := metav1.ListOptions{Limit: rewritePage}
	for {
		list, err := secrets.List(ctx, opts)
		if apierrors.IsResourceExpired(err) && opts.Continue != "" {
			// The list took longer than etcd keeps its revision: start again from the top.
			// Rewriting a Secret twice does no harm.
			opts.Continue = ""
			continue
		}
		if err != nil {
			return n, fmt.Errorf("listing Secrets: %w", err)
		}
		for i := range list.Items {
			s := &list.Items[i]
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				_, err := kc.CoreV1().Secrets(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
				if apierrors.IsConflict(err) {
					fresh, gerr := kc.CoreV1().Secrets(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
					if gerr != nil {
						return gerr
					}
					s = fresh
				}
				return err
			})
			switch {
			case apierrors.IsNotFound(err):
				continue
			case err != nil:
				return n, fmt.Errorf("rewriting Secret %s/%s: %w", s.Namespace, s.Name, err)
			}
			n++
		}
		if progress != nil {
			progress(n)
		}
		if list.Continue == "" {
			return n, nil
		}
		opts.Continue = list.Continue
	}
}
