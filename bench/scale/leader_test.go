package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestBoundSettingsAreTheRunningConfiguration(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: operatorNamespace + "-config"},
		Data: map[string]string{"config.yaml": "maxOperationsInFlight: 0\noperationSlowdownLimit: 2\nmaxConcurrentReconciles: 4\nkubeAPIQPS: 50\n"}}
	b := &bench{c: fake.NewClientBuilder().WithObjects(cm).Build()}
	assert.Equal(t, "operator: maxOperationsInFlight 0, operationSlowdownLimit 2, maxConcurrentReconciles 4, kubeAPIQPS 50",
		b.boundSettings(context.Background()))

	missing := &bench{c: fake.NewClientBuilder().Build()}
	assert.Contains(t, missing.boundSettings(context.Background()), "operator configuration unread")
}
