// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

type createLogGroupInput struct {
	LogGroupName  *string           `json:"logGroupName"`
	KmsKeyID      *string           `json:"kmsKeyId"`
	Tags          map[string]string `json:"tags"`
	LogGroupClass *string           `json:"logGroupClass"`
}

func required(v *string, member string) *apiError {
	if v == nil {
		return constraintError("null", member, "Member must not be null")
	}
	return nil
}

func (s *Server) createLogGroup(in *createLogGroupInput) (any, *apiError) {
	if err := required(in.LogGroupName, "logGroupName"); err != nil {
		return nil, err
	}
	if err := validateNewGroupName(*in.LogGroupName); err != nil {
		return nil, err
	}
	class := "STANDARD"
	if in.LogGroupClass != nil {
		if err := validateClass(*in.LogGroupClass); err != nil {
			return nil, err
		}
		class = *in.LogGroupClass
	}
	if in.KmsKeyID != nil {
		if err := validateKMSKeyID(*in.KmsKeyID); err != nil {
			return nil, err
		}
	}
	if err := validateTags(in.Tags, "tags"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[*in.LogGroupName]; ok {
		return nil, errGroupExists
	}
	if len(s.groups) >= s.limits.MaxLogGroups {
		return nil, &apiError{http.StatusBadRequest, CodeLimitExceeded, "Resource limit exceeded."}
	}
	g := &logGroup{
		name: *in.LogGroupName, created: s.nowMillis(), class: class,
		tags: maps.Clone(in.Tags), streams: map[string]*logStream{},
	}
	if in.KmsKeyID != nil {
		g.kmsKeyID = *in.KmsKeyID
	}
	if s.cfg.CreationDelay > 0 {
		g.visibleAt = time.Now().Add(s.cfg.CreationDelay)
	}
	s.groups[g.name] = g
	return empty{}, nil
}

type groupNameInput struct {
	LogGroupName *string `json:"logGroupName"`
}

// lookupGroup validates a logGroupName member and returns the group; the caller holds s.mu.
func (s *Server) lookupGroup(name *string) (*logGroup, *apiError) {
	if err := required(name, "logGroupName"); err != nil {
		return nil, err
	}
	if err := validateGroupName(*name, "logGroupName"); err != nil {
		return nil, err
	}
	g, ok := s.groups[*name]
	if !ok || !visible(g.visibleAt) {
		return nil, errGroupNotFound
	}
	return g, nil
}

// lookupGroupByNameOrID resolves the logGroupName / logGroupIdentifier pair that read
// operations accept (exactly one of them must be set); the caller holds s.mu.
func (s *Server) lookupGroupByNameOrID(name, id *string) (*logGroup, *apiError) {
	switch {
	case name != nil && id != nil:
		return nil, invalidParam("LogGroup name and LogGroup ARN are mutually exclusive parameters.")
	case id != nil:
		n, ok := groupNameFromIdentifier(*id)
		if !ok {
			return nil, invalidParam("The specified logGroupIdentifier %s is not a valid log group name or ARN.", *id)
		}
		return s.lookupGroup(&n)
	case name == nil:
		return nil, invalidParam("Either logGroupName or logGroupIdentifier must be specified.")
	}
	return s.lookupGroup(name)
}

func (s *Server) deleteLogGroup(in *groupNameInput) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	delete(s.groups, g.name)
	return empty{}, nil
}

type describeLogGroupsInput struct {
	LogGroupNamePrefix  *string  `json:"logGroupNamePrefix"`
	LogGroupNamePattern *string  `json:"logGroupNamePattern"`
	LogGroupClass       *string  `json:"logGroupClass"`
	LogGroupIdentifiers []string `json:"logGroupIdentifiers"`
	NextToken           *string  `json:"nextToken"`
	Limit               *int32   `json:"limit"`
}

type logGroupOut struct {
	LogGroupName      string `json:"logGroupName"`
	CreationTime      int64  `json:"creationTime"`
	RetentionInDays   int32  `json:"retentionInDays,omitempty"`
	MetricFilterCount int32  `json:"metricFilterCount"`
	Arn               string `json:"arn"`
	StoredBytes       int64  `json:"storedBytes"`
	KmsKeyID          string `json:"kmsKeyId,omitempty"`
	LogGroupClass     string `json:"logGroupClass"`
	LogGroupArn       string `json:"logGroupArn"`
}

func (s *Server) describeLogGroups(in *describeLogGroupsInput) (any, *apiError) {
	limit, err := limitParam(in.Limit, 50, 50)
	if err != nil {
		return nil, err
	}
	if in.LogGroupNamePrefix != nil && in.LogGroupNamePattern != nil {
		return nil, invalidParam("LogGroup name prefix and LogGroup name pattern are mutually exclusive parameters.")
	}
	if (in.LogGroupNamePrefix != nil || in.LogGroupNamePattern != nil) && len(in.LogGroupIdentifiers) > 0 {
		return nil, invalidParam("logGroupIdentifiers is mutually exclusive with logGroupNamePrefix and logGroupNamePattern.")
	}
	if in.LogGroupNamePrefix != nil {
		if err := validateGroupName(*in.LogGroupNamePrefix, "logGroupNamePrefix"); err != nil {
			return nil, err
		}
	}
	if in.LogGroupClass != nil {
		if err := validateClass(*in.LogGroupClass); err != nil {
			return nil, err
		}
	}
	if len(in.LogGroupIdentifiers) > 50 {
		return nil, constraintError("[...]", "logGroupIdentifiers", "Member must have length less than or equal to 50")
	}
	var after string
	if in.NextToken != nil {
		parts, ok := parsePageToken(*in.NextToken, "groups", 1)
		if !ok {
			return nil, errBadToken
		}
		after = parts[0]
	}
	var wanted map[string]bool
	if len(in.LogGroupIdentifiers) > 0 {
		wanted = map[string]bool{}
		for _, id := range in.LogGroupIdentifiers {
			if n, ok := groupNameFromIdentifier(id); ok {
				wanted[n] = true
			}
		}
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	var page []logGroupOut
	next := ""
	for _, name := range slices.Sorted(maps.Keys(s.groups)) {
		g := s.groups[name]
		switch {
		case in.NextToken != nil && name <= after,
			in.LogGroupNamePrefix != nil && !strings.HasPrefix(name, *in.LogGroupNamePrefix),
			in.LogGroupNamePattern != nil && !strings.Contains(strings.ToLower(name), strings.ToLower(*in.LogGroupNamePattern)),
			in.LogGroupClass != nil && g.class != *in.LogGroupClass,
			wanted != nil && !wanted[name],
			!visible(g.visibleAt):
			continue
		}
		if len(page) == limit {
			next = pageToken("groups", page[len(page)-1].LogGroupName)
			break
		}
		gi := g.info(s)
		page = append(page, logGroupOut{
			LogGroupName: g.name, CreationTime: g.created, RetentionInDays: g.retention,
			Arn: gi.ARN + ":*", StoredBytes: gi.StoredBytes, KmsKeyID: g.kmsKeyID,
			LogGroupClass: g.class, LogGroupArn: gi.ARN,
		})
	}
	out := struct {
		LogGroups []logGroupOut `json:"logGroups"`
		NextToken string        `json:"nextToken,omitempty"`
	}{LogGroups: page, NextToken: next}
	if out.LogGroups == nil {
		out.LogGroups = []logGroupOut{}
	}
	return out, nil
}

type putRetentionPolicyInput struct {
	LogGroupName    *string `json:"logGroupName"`
	RetentionInDays *int32  `json:"retentionInDays"`
}

func (s *Server) putRetentionPolicy(in *putRetentionPolicyInput) (any, *apiError) {
	if in.RetentionInDays == nil {
		return nil, constraintError("null", "retentionInDays", "Member must not be null")
	}
	if err := validateRetention(*in.RetentionInDays); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	g.retention = *in.RetentionInDays
	return empty{}, nil
}

func (s *Server) deleteRetentionPolicy(in *groupNameInput) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	g.retention = 0
	return empty{}, nil
}

type kmsKeyInput struct {
	LogGroupName       *string `json:"logGroupName"`
	KmsKeyID           *string `json:"kmsKeyId"`
	ResourceIdentifier *string `json:"resourceIdentifier"`
}

func (s *Server) associateKmsKey(in *kmsKeyInput) (any, *apiError) {
	if err := required(in.KmsKeyID, "kmsKeyId"); err != nil {
		return nil, err
	}
	if err := validateKMSKeyID(*in.KmsKeyID); err != nil {
		return nil, err
	}
	if in.ResourceIdentifier != nil {
		return nil, invalidParam("localcloudwatch supports only logGroupName in AssociateKmsKey, not resourceIdentifier.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	g.kmsKeyID = *in.KmsKeyID
	return empty{}, nil
}

func (s *Server) disassociateKmsKey(in *kmsKeyInput) (any, *apiError) {
	if in.ResourceIdentifier != nil {
		return nil, invalidParam("localcloudwatch supports only logGroupName in DisassociateKmsKey, not resourceIdentifier.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	g.kmsKeyID = ""
	return empty{}, nil
}

type tagLogGroupInput struct {
	LogGroupName *string           `json:"logGroupName"`
	Tags         map[string]string `json:"tags"`
}

type untagLogGroupInput struct {
	LogGroupName *string  `json:"logGroupName"`
	Tags         []string `json:"tags"`
}

type tagResourceInput struct {
	ResourceArn *string           `json:"resourceArn"`
	Tags        map[string]string `json:"tags"`
}

type untagResourceInput struct {
	ResourceArn *string  `json:"resourceArn"`
	TagKeys     []string `json:"tagKeys"`
}

type resourceArnInput struct {
	ResourceArn *string `json:"resourceArn"`
}

type tagsOut struct {
	Tags map[string]string `json:"tags"`
}

// addTags merges tags into g, refusing to exceed the per-resource maximum; tooMany is
// the error code for that case.
func addTags(g *logGroup, tags map[string]string, member, tooMany string) *apiError {
	if len(tags) == 0 {
		return constraintError("{}", member, "Member must have length greater than or equal to 1")
	}
	if err := validateTags(tags, member); err != nil {
		return err
	}
	merged := maps.Clone(g.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	if len(merged) > maxTags {
		return &apiError{http.StatusBadRequest, tooMany, "A resource can have no more than 50 tags."}
	}
	g.tags = merged
	return nil
}

func removeTags(g *logGroup, keys []string, member string) *apiError {
	if len(keys) == 0 {
		return constraintError("[]", member, "Member must have length greater than or equal to 1")
	}
	for _, k := range keys {
		if err := validateTagKey(k, member+".member"); err != nil {
			return err
		}
	}
	for _, k := range keys {
		delete(g.tags, k)
	}
	return nil
}

func tagsResponse(g *logGroup) tagsOut {
	t := maps.Clone(g.tags)
	if t == nil {
		t = map[string]string{}
	}
	return tagsOut{Tags: t}
}

func (s *Server) tagLogGroup(in *tagLogGroupInput) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	if err := addTags(g, in.Tags, "tags", CodeInvalidParameter); err != nil {
		return nil, err
	}
	return empty{}, nil
}

func (s *Server) untagLogGroup(in *untagLogGroupInput) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	if err := removeTags(g, in.Tags, "tags"); err != nil {
		return nil, err
	}
	return empty{}, nil
}

func (s *Server) listTagsLogGroup(in *groupNameInput) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	return tagsResponse(g), nil
}

// groupByARN resolves a log group ARN (with or without the ":*" suffix); the caller
// holds s.mu.
func (s *Server) groupByARN(arn *string) (*logGroup, *apiError) {
	if err := required(arn, "resourceArn"); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(*arn, "arn:") {
		return nil, invalidParam("Invalid resourceArn: %s", *arn)
	}
	name, ok := groupNameFromIdentifier(*arn)
	if !ok {
		return nil, invalidParam("Invalid resourceArn: %s (localcloudwatch tags log groups only)", *arn)
	}
	g, found := s.groups[name]
	if !found {
		return nil, notFound("The specified resource does not exist.")
	}
	return g, nil
}

func (s *Server) tagResource(in *tagResourceInput) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.groupByARN(in.ResourceArn)
	if err != nil {
		return nil, err
	}
	if err := addTags(g, in.Tags, "tags", CodeTooManyTags); err != nil {
		return nil, err
	}
	return empty{}, nil
}

func (s *Server) untagResource(in *untagResourceInput) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.groupByARN(in.ResourceArn)
	if err != nil {
		return nil, err
	}
	if err := removeTags(g, in.TagKeys, "tagKeys"); err != nil {
		return nil, err
	}
	return empty{}, nil
}

func (s *Server) listTagsForResource(in *resourceArnInput) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.groupByARN(in.ResourceArn)
	if err != nil {
		return nil, err
	}
	return tagsResponse(g), nil
}
