# lit configuration for tpc: FileCheck tests of the tools and passes.
import os
import lit.formats

config.name = "tpc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tpc_obj_root, "test")
config.excludes = ["models", "unit", "Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]

config.environment["PATH"] = os.pathsep.join(
    [config.tpc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%models", os.path.join(config.tpc_src_root, "test", "models")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%src", config.tpc_src_root))
config.substitutions.append(("%obj_root", config.tpc_obj_root))
# Where pass plugins (TPCMlpOnlyShardingPlugin.so) are built.
config.substitutions.append(("%plugin_dir", config.tpc_lib_dir))
# The sanitizer build: memory bounds do not hold under AddressSanitizer
# (shadow memory, quarantine), so tests of peak RSS are unsupported there.
if "address" in getattr(config, "tpc_sanitize", ""):
    config.available_features.add("asan")
if config.tpc_have_mpi:
    config.available_features.add("mpi")


def can_mount_tmpfs():
    """Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN, as
    in most CI containers not): tried once, on a 64 KiB one."""
    import shutil
    import subprocess
    import tempfile
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    target = tempfile.mkdtemp(prefix="tpc-lit-tmpfs-")
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", target],
            capture_output=True, timeout=20).returncode == 0
        if mounted:
            subprocess.run(["umount", target], capture_output=True, timeout=20)
        return mounted
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        try:
            os.rmdir(target)
        except OSError:
            pass


# The compile tests of a file system that fills up (full-disk-tmpfs.test).
if can_mount_tmpfs():
    config.available_features.add("tmpfs-mount")
if config.tpc_have_cuda:
    config.available_features.add("cuda-build")
    # "cuda": a GPU is present too, so tests may run engines on it.
    import shutil
    import subprocess
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            listed = subprocess.run([smi, "-L"], capture_output=True, text=True,
                                    timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            listed = ""
        if listed.startswith("GPU "):
            config.available_features.add("cuda")
