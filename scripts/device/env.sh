# Sourced from the repository root on the device (scripts/device/run1.sh, run2.sh): the bundle's Open MPI and binaries.
R=$(pwd)/.dev16/root
export OPAL_PREFIX=$R/usr PMIX_INSTALL_PREFIX=$R/usr/lib/x86_64-linux-gnu/pmix2
export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu/openmpi/lib:$R/usr/lib/x86_64-linux-gnu/pmix2/lib
export PATH=$R/usr/bin:$R/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mca_base_component_show_load_errors=0 PMIX_MCA_mca_base_component_show_load_errors=0
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
