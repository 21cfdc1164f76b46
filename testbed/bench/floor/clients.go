// SPDX-License-Identifier: Apache-2.0

//go:build clients

package main

// Built with -tags clients, the empty collector also links the client libraries the node
// agent's components talk to Kubernetes and CloudWatch Logs with (their package initializers
// run, nothing else): client-go's clientset and the AWS SDK's configuration loader and CloudWatch
// Logs client. What it holds at idle is the floor of any node agent with those features
// (testbed/BENCHMARKS.md, issue 17, ninth look).
import (
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	_ "k8s.io/client-go/kubernetes"
)
