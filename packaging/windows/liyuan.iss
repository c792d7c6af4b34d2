; Inno Setup 6 script of 梨园 Liyuan Desktop (issue 32 §2): a per-user installer around the PyInstaller folder.
;
;   iscc /DAppVersion=0.1.0 /DSourceDir=..\..\dist\liyuan /DIconFile=..\..\build\icons\liyuan.ico packaging\windows\liyuan.iss
;
; (paths relative to this file; the CI's build workflow passes absolute ones). No administrator rights: the app goes to
; %LOCALAPPDATA%\Programs\Liyuan, a Start-menu entry (and, when ticked, a desktop shortcut) points at liyuan.exe, and
; the uninstaller removes the program only — the chats in %LOCALAPPDATA%\liyuan stay (like the .deb and the .run).
; Unsigned: SmartScreen shows "Windows protected your PC" until the installer is signed (packaging/README.md).

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\liyuan"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\icons\liyuan.ico"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist\installer"
#endif

[Setup]
AppId={{5B0E3C1A-7A61-4D2B-9C3E-6C1F2A8E4D71}
AppName=Liyuan Desktop
AppVerName=Liyuan Desktop {#AppVersion}
AppVersion={#AppVersion}
AppPublisher=Liyuan Desktop
DefaultDirName={localappdata}\Programs\Liyuan
DefaultGroupName=Liyuan Desktop
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#OutputDir}
OutputBaseFilename=liyuan-{#AppVersion}-windows-x86_64-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\liyuan.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes

[Languages]
; English only: Simplified Chinese is not among the translations every Inno Setup 6 release installs
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[InstallDelete]
; an upgrade replaces the bundled libraries: nothing of an older version may stay next to the new one
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
Name: "{autoprograms}\Liyuan Desktop"; Filename: "{app}\liyuan.exe"
Name: "{autodesktop}\Liyuan Desktop"; Filename: "{app}\liyuan.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\liyuan.exe"; Description: "{cm:LaunchProgram,Liyuan Desktop}"; Flags: nowait postinstall skipifsilent
