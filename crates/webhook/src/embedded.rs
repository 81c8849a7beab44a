//! The default policies, embedded in the binary: the Pod Security Standards of
//! `policies/pod-security/` at the repository's root (baseline enforced with Deny, restricted as
//! warnings, every namespace but `kube-system`). The repository's files stay the single source:
//! each is included as it is, and a test checks that this list is exactly the directory's files.

/// A file name (as shown in load errors) and its text.
pub type EmbeddedFile = (&'static str, &'static str);

macro_rules! pod_security {
    ($($name:literal),* $(,)?) => {
        /// The embedded Pod Security policy files, in name order.
        pub const POD_SECURITY: &[EmbeddedFile] = &[
            $((
                concat!("embedded:policies/pod-security/", $name),
                include_str!(concat!("../../../policies/pod-security/", $name)),
            )),*
        ];
    };
}

pod_security!(
    "baseline-apparmor-profile.yaml",
    "baseline-capabilities.yaml",
    "baseline-host-namespaces.yaml",
    "baseline-host-path-volumes.yaml",
    "baseline-host-ports.yaml",
    "baseline-host-probes-and-host-lifecycle.yaml",
    "baseline-privileged.yaml",
    "baseline-proc-mount.yaml",
    "baseline-seccomp-profile.yaml",
    "baseline-selinux-options.yaml",
    "baseline-sysctls.yaml",
    "baseline-windows-host-process.yaml",
    "restricted-allow-privilege-escalation.yaml",
    "restricted-capabilities.yaml",
    "restricted-proc-mount.yaml",
    "restricted-run-as-non-root.yaml",
    "restricted-run-as-user.yaml",
    "restricted-seccomp-profile.yaml",
    "restricted-volume-types.yaml",
);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn embedded_set_is_the_directory() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/pod-security");
        let files = celer_offline::files::manifest_files(&dir).unwrap();
        let on_disk: Vec<(String, String)> = files
            .iter()
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                (name, std::fs::read_to_string(p).unwrap())
            })
            .collect();
        let embedded: Vec<(String, String)> = POD_SECURITY
            .iter()
            .map(|(name, text)| {
                let short = name.rsplit('/').next().unwrap().to_string();
                (short, (*text).to_string())
            })
            .collect();
        let names = |v: &[(String, String)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&embedded),
            names(&on_disk),
            "embedded list differs from the directory"
        );
        assert_eq!(embedded, on_disk);
    }
}
