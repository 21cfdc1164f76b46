// SPDX-License-Identifier: Apache-2.0

package sender

// Group settings (design.md, section 7): retention, tags, KMS key and class, applied in the
// background by one worker so that no send waits for them.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"go.uber.org/zap"
)

// GroupSettings are applied to every group the sender writes to.
type GroupSettings struct {
	RetentionDays int32
	Tags          map[string]string
	KMSKeyID      string
	Class         string
}

func (g GroupSettings) empty() bool {
	return g.RetentionDays == 0 && len(g.Tags) == 0 && g.KMSKeyID == "" && g.Class == ""
}

type groupState struct {
	queued bool // a settings job for the group is queued or done in this process
}

// settingsJob asks the background worker to apply settings to one group.
type settingsJob struct {
	group string
	// created is set for a group this process created without (some of) its settings.
	created bool
}

// settingsBudget bounds the retries of one attempt to apply a group's settings.
const settingsBudget = 5 * time.Second

// maxUnlisted is how many times the worker waits (with the backoff) for a group it created to
// be listed by DescribeLogGroups before it counts the attempt as failed.
const maxUnlisted = 8

// settingsRetryDelay is the pause after a failed attempt to apply group settings.
const settingsRetryDelay = time.Minute

// settingsQueue bounds the groups waiting for their settings; more are tried again later.
const settingsQueue = 1024

func (s *Sender) group(name string) *groupState {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[name]
	if !ok {
		if len(s.groups) >= createdLimit {
			clear(s.groups)
		}
		g = &groupState{queued: s.cfg.Settings.empty()}
		s.groups[name] = g
	}
	return g
}

// Prepare asks, once per process and group, for the settings to be applied to an existing
// group when ApplyToExisting is set. It never waits: the background worker does the calls.
func (s *Sender) Prepare(group string) {
	if !s.cfg.ApplyToExisting {
		return
	}
	s.enqueue(settingsJob{group: group})
}

func (s *Sender) enqueue(job settingsJob) {
	g := s.group(job.group)
	s.mu.Lock()
	if g.queued && !job.created {
		s.mu.Unlock()
		return
	}
	g.queued = true
	s.mu.Unlock()
	select {
	case s.pending <- job:
	default:
		// Queue full: forget the group, so a later send asks again.
		s.mu.Lock()
		g.queued = false
		s.mu.Unlock()
	}
}

// settingsWorker applies settings one group at a time, so settings calls never run in
// parallel with themselves and never hold a send back. A failure is logged, counted and tried
// again settingsRetryDelay later.
func (s *Sender) settingsWorker() {
	defer s.workerWG.Done()
	ctx := context.Background()
	for {
		var job settingsJob
		select {
		case <-s.stop:
			return
		case job = <-s.pending:
		}
		var bo backoffState
		for unlisted := 0; ; {
			err := s.reconcile(WithDeadline(ctx, time.Now().Add(settingsBudget)), job.group)
			if errors.Is(err, errNotListed) && !job.created {
				// Not created yet: whoever creates it applies the settings.
				break
			}
			if errors.Is(err, errNotListed) && unlisted < maxUnlisted {
				// Created moments ago: the listing is eventually consistent.
				unlisted++
				if s.sleep(ctx, bo.next(s.cfg.Backoff)) != nil {
					return
				}
				continue
			}
			s.obs.SettingsApplied(ctx, err == nil)
			if err == nil || errors.Is(err, errStopping) {
				break
			}
			s.logger.Warn("Applying log group settings failed; will try again", zap.String("log_group", job.group),
				zap.Duration("after", settingsRetryDelay), zap.Error(err))
			if s.sleep(ctx, settingsRetryDelay) != nil {
				return
			}
		}
	}
}

func (s *Sender) putRetention(ctx context.Context, group string) error {
	return s.retry(ctx, "PutRetentionPolicy", func() error {
		_, err := s.api.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{
			LogGroupName: aws.String(group), RetentionInDays: aws.Int32(s.cfg.Settings.RetentionDays),
		})
		return err
	})
}

// reconcile brings a group's settings in line: one DescribeLogGroups, then a call only for
// each setting that differs. Tags are compared through ListTagsForResource.
func (s *Sender) reconcile(ctx context.Context, group string) error {
	set := s.cfg.Settings
	var found *types.LogGroup
	err := s.retry(ctx, "DescribeLogGroups", func() error {
		var next *string
		for {
			out, err := s.api.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{
				LogGroupNamePrefix: aws.String(group), NextToken: next,
			})
			if err != nil {
				return err
			}
			for i := range out.LogGroups {
				if aws.ToString(out.LogGroups[i].LogGroupName) == group {
					found = &out.LogGroups[i]
					return nil
				}
			}
			if out.NextToken == nil || aws.ToString(out.NextToken) == aws.ToString(next) {
				return nil
			}
			next = out.NextToken
		}
	})
	if err != nil {
		return fmt.Errorf("describe log group %q: %w", group, err)
	}
	if found == nil {
		return fmt.Errorf("log group %q: %w", group, errNotListed)
	}
	if set.Class != "" && found.LogGroupClass != "" && string(found.LogGroupClass) != set.Class {
		s.obs.ClassMismatch(ctx)
		s.logger.Warn("Existing log group has another class; the class of a group cannot be changed",
			zap.String("log_group", group), zap.String("class", string(found.LogGroupClass)), zap.String("configured", set.Class))
	}
	var errs []error
	if set.RetentionDays > 0 && aws.ToInt32(found.RetentionInDays) != set.RetentionDays {
		if err := s.putRetention(ctx, group); err != nil {
			errs = append(errs, fmt.Errorf("put retention policy: %w", err))
		}
	}
	if set.KMSKeyID != "" && aws.ToString(found.KmsKeyId) != set.KMSKeyID {
		err := s.retry(ctx, "AssociateKmsKey", func() error {
			_, err := s.api.AssociateKmsKey(ctx, &cloudwatchlogs.AssociateKmsKeyInput{
				LogGroupName: aws.String(group), KmsKeyId: aws.String(set.KMSKeyID),
			})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("associate kms key: %w", err))
		}
	}
	if len(set.Tags) > 0 {
		arn := aws.ToString(found.LogGroupArn)
		if arn == "" {
			arn = strings.TrimSuffix(aws.ToString(found.Arn), ":*")
		}
		var have map[string]string
		err := s.retry(ctx, "ListTagsForResource", func() error {
			out, err := s.api.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
			if err == nil {
				have = out.Tags
			}
			return err
		})
		if err == nil && tagsContain(have, set.Tags) {
			return errors.Join(errs...)
		}
		err = s.retry(ctx, "TagResource", func() error {
			_, err := s.api.TagResource(ctx, &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: set.Tags})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("tag resource: %w", err))
		}
	}
	return errors.Join(errs...)
}

// errNotListed says DescribeLogGroups does not list a group (not created, or created moments
// ago: the listing is eventually consistent).
var errNotListed = errors.New("not listed by DescribeLogGroups")

// tagsContain reports whether have holds every tag of want with the same value.
func tagsContain(have, want map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}
