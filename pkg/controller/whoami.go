package controller

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ControllerUser asks the API server who cfg authenticates as (a SelfSubjectReview, which every
// authenticated user may create), so that admission knows the controller's own user without
// being told: it is the one user allowed to write spec.providerID and the state annotations.
func ControllerUser(ctx context.Context, cfg *rest.Config) (string, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("creating clientset: %w", err)
	}
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking the API server who the machine-controller is (SelfSubjectReview): %w", err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the API server names no user for the machine-controller's credentials")
	}
	return r.Status.UserInfo.Username, nil
}
