package v1beta1

import corev1 "k8s.io/api/core/v1"

// ArtifactRepository is one artifact repository configuration, in the format
// of the values of an Argo Workflows "artifact-repositories" ConfigMap, so a
// namespace's existing ConfigMap works unchanged. Exactly one backend is set.
// Credentials are referenced by Secret key, never inlined.
// +kubebuilder:validation:XValidation:rule="[has(self.s3), has(self.gcs)].filter(x, x).size() == 1",message="exactly one of s3 or gcs must be set"
type ArtifactRepository struct {
	// S3 or S3-compatible (e.g. MinIO) storage.
	// +optional
	S3 *S3ArtifactRepository `json:"s3,omitempty"`

	// GCS is Google Cloud Storage.
	// +optional
	GCS *GCSArtifactRepository `json:"gcs,omitempty"`
}

// S3ArtifactRepository locates artifacts in an S3 bucket.
type S3ArtifactRepository struct {
	// Bucket name.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	Bucket string `json:"bucket"`

	// Endpoint of an S3-compatible service, e.g. "minio.minio:9000".
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// Region of the bucket.
	// +optional
	Region string `json:"region,omitempty"`

	// Insecure uses plain HTTP to the endpoint.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// KeyPrefix is prepended to every object key.
	// +optional
	KeyPrefix string `json:"keyPrefix,omitempty"`

	// KeyFormat is an Argo key template; only its static prefix is used.
	// +optional
	KeyFormat string `json:"keyFormat,omitempty"`

	// AccessKeySecret references the access key id.
	// +optional
	AccessKeySecret *corev1.SecretKeySelector `json:"accessKeySecret,omitempty"`

	// SecretKeySecret references the secret access key.
	// +optional
	SecretKeySecret *corev1.SecretKeySelector `json:"secretKeySecret,omitempty"`
}

// GCSArtifactRepository locates artifacts in a GCS bucket.
type GCSArtifactRepository struct {
	// Bucket name.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=222
	Bucket string `json:"bucket"`

	// KeyPrefix is prepended to every object key.
	// +optional
	KeyPrefix string `json:"keyPrefix,omitempty"`

	// KeyFormat is an Argo key template; only its static prefix is used.
	// +optional
	KeyFormat string `json:"keyFormat,omitempty"`

	// ServiceAccountKeySecret references a service account key (JSON).
	// +optional
	ServiceAccountKeySecret *corev1.SecretKeySelector `json:"serviceAccountKeySecret,omitempty"`
}
