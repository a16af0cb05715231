# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE). Debian's zsh looks for the
# completions of packages in /usr/share/zsh/vendor-completions, not in site-functions.
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_CUSTOM_INSTALL_VARIABLES "WARPCSV_ZSH_DIR=share/zsh/vendor-completions")
endif()
